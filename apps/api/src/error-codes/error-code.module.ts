import { Module } from '@nestjs/common';
import { ErrorCodeController } from './error-code.controller';

@Module({ controllers: [ErrorCodeController] })
export class ErrorCodeModule {}
