import { Module } from '@nestjs/common';
import { ApplicationListController } from './application-list.controller';

@Module({ controllers: [ApplicationListController] })
export class ApplicationListModule {}
