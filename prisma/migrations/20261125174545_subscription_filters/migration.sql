-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "filter" JSON;

-- Every api process caches each subscription's compiled filter (apps/api/src/subscriptions/subscription-filters.ts)
-- and forgets it when this names it: a filter set or removed, a subscription created or deleted (a
-- webhook's deletion cascades here too), whatever statement did it. Payload: "<application id>:<event type>".
-- The body's semicolons are written \073: the migration runner's driver splits scripts at every semicolon, even in a string.
CREATE FUNCTION "herald_notify_subscription_changed"() RETURNS trigger LANGUAGE plpgsql AS E'
BEGIN
  IF TG_OP = ''DELETE'' THEN
    PERFORM pg_notify(''herald_subscriptions'', OLD.application_id::text || '':'' || OLD.event_type)\073
  ELSE
    PERFORM pg_notify(''herald_subscriptions'', NEW.application_id::text || '':'' || NEW.event_type)\073
  END IF\073
  RETURN NULL\073
END
';

CREATE TRIGGER "subscriptions_notify_changed"
AFTER INSERT OR DELETE OR UPDATE OF "filter" ON "subscriptions"
FOR EACH ROW EXECUTE FUNCTION "herald_notify_subscription_changed"();
