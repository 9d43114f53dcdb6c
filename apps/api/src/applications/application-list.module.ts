import { Module } from '@nestjs/common';
import { ApplicationListController } from './application-list.controller';
import { ApplicationOverviewController } from './application-overview.controller';

@Module({ controllers: [ApplicationListController, ApplicationOverviewController] })
export class ApplicationListModule {}
