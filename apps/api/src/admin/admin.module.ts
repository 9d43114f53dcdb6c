import { Module } from '@nestjs/common';
import { EventTypeModule } from '../event-types/event-type.module';
import { AdminController } from './admin.controller';
import { AdminService } from './admin.service';
import { BootstrapAdminKey } from './bootstrap-admin-key';

@Module({ imports: [EventTypeModule], controllers: [AdminController], providers: [AdminService, BootstrapAdminKey] })
export class AdminModule {}
