import { Module } from '@nestjs/common';
import { PortalLinkController } from './portal-link.controller';
import { PortalLinkService } from './portal-link.service';

@Module({ controllers: [PortalLinkController], providers: [PortalLinkService] })
export class PortalLinkModule {}
