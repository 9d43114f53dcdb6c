import { Module } from '@nestjs/common';
import { AdminController } from './admin.controller';
import { AdminService } from './admin.service';
import { BootstrapAdminKey } from './bootstrap-admin-key';

@Module({ controllers: [AdminController], providers: [AdminService, BootstrapAdminKey] })
export class AdminModule {}
