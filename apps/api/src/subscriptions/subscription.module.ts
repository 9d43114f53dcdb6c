import { Module } from '@nestjs/common';
import { SubscriptionController } from './subscription.controller';
import { SubscriptionFilterController } from './subscription-filter.controller';
import { SubscriptionFilterService } from './subscription-filter.service';
import { SubscriptionFilters } from './subscription-filters';
import { SubscriptionService } from './subscription.service';

@Module({
  controllers: [SubscriptionController, SubscriptionFilterController],
  providers: [SubscriptionService, SubscriptionFilterService, SubscriptionFilters],
  exports: [SubscriptionFilters],
})
export class SubscriptionModule {}
