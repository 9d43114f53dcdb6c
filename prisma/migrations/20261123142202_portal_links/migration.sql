-- CreateTable
CREATE TABLE "portal_links" (
    "id" TEXT NOT NULL,
    "application_id" INTEGER NOT NULL,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "portal_links_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "portal_links_token_hash_key" ON "portal_links"("token_hash");

-- CreateIndex
CREATE INDEX "portal_links_application_id_idx" ON "portal_links"("application_id");

-- AddForeignKey
ALTER TABLE "portal_links" ADD CONSTRAINT "portal_links_application_id_fkey" FOREIGN KEY ("application_id") REFERENCES "applications"("id") ON DELETE CASCADE ON UPDATE CASCADE;
