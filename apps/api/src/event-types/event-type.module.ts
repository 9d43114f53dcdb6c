import { Module } from '@nestjs/common';
import { EventTypeController } from './event-type.controller';

@Module({ controllers: [EventTypeController] })
export class EventTypeModule {}
