import { Module } from '@nestjs/common';
import { EventTypeModule } from '../event-types/event-type.module';
import { SubscriptionModule } from '../subscriptions/subscription.module';
import { EventController } from './event.controller';
import { EventService } from './event.service';

@Module({ imports: [EventTypeModule, SubscriptionModule], controllers: [EventController], providers: [EventService] })
export class EventModule {}
