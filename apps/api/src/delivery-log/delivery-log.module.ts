import { Module } from '@nestjs/common';
import { DeliveryLogController } from './delivery-log.controller';
import { DeliveryLogService } from './delivery-log.service';

/** The delivery log (PRODUCT §5.5): reading deliveries and their attempts, and retrying by hand. Delivering is the worker's. */
@Module({ controllers: [DeliveryLogController], providers: [DeliveryLogService] })
export class DeliveryLogModule {}
