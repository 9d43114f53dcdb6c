import { Module } from '@nestjs/common';
import { EventTypeController } from './event-type.controller';
import { EventTypeSchemas } from './event-type-schemas';
import { EventTypeService } from './event-type.service';

@Module({
  controllers: [EventTypeController],
  providers: [EventTypeService, EventTypeSchemas],
  exports: [EventTypeService, EventTypeSchemas],
})
export class EventTypeModule {}
