import { Module } from '@nestjs/common';
import { StatisticsController } from './statistics.controller';
import { StatisticsService } from './statistics.service';

/** Delivery statistics' route (PRODUCT.md §16). Writing them is the worker's finish statement's (@herald/database). */
@Module({ controllers: [StatisticsController], providers: [StatisticsService] })
export class StatisticsModule {}
