import { ApiProperty } from '@nestjs/swagger';

/** The success body of every route beyond the seed's own shapes (PRODUCT.md §2). */
export interface Envelope<T> {
  success: true;
  data: T;
}

/** A page of a cursor-paged list. */
export interface PageEnvelope<T> extends Envelope<T[]> {
  next_cursor: string | null;
}

export function ok<T>(data: T): Envelope<T> {
  return { success: true, data };
}

export function page<T>(items: T[], nextCursor: string | null): PageEnvelope<T> {
  return { success: true, data: items, next_cursor: nextCursor };
}

type Class<T> = new (...args: never[]) => T;

/**
 * The `success` flag as the literal it always is (`true` in every success body, `false` in every
 * error). OpenAPI 3.0 has no `const`; a one-value enum is its spelling of a literal.
 */
export function ApiSuccessFlag(value: boolean): PropertyDecorator {
  return ApiProperty({ type: 'boolean', enum: [value], example: value });
}

/**
 * The OpenAPI shape of `{ success: true, data: <dto> }`, to extend: `class WebhookResponse extends
 * EnvelopeOf(WebhookConfigDto) {}` keeps a named schema per response without writing the
 * envelope's fields again.
 */
export function EnvelopeOf<T>(dto: Class<T>): Class<Envelope<T>> {
  class EnvelopeOfDto {
    @ApiSuccessFlag(true)
    success!: true;

    @ApiProperty({ type: dto })
    data!: T;
  }
  return EnvelopeOfDto;
}

/** `{ success: true, data: [<dto>…], next_cursor }`, to extend like EnvelopeOf. */
export function PageOf<T>(dto: Class<T>): Class<PageEnvelope<T>> {
  class PageOfDto {
    @ApiSuccessFlag(true)
    success!: true;

    @ApiProperty({ type: [dto] })
    data!: T[];

    @ApiProperty({ type: String, nullable: true, example: null, description: 'Pass as `cursor` for the next page; null on the last.' })
    next_cursor!: string | null;
  }
  return PageOfDto;
}
