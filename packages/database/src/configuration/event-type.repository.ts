import { OPERATIONAL_EVENT_TYPES, isOperationalEventType } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { classifyDatabaseError } from '../database-errors';
import { PrismaService } from '../prisma.service';
import { EventTypeRecord, Page } from '../records';

@Injectable()
export class EventTypeRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * The customers' event types by name (Herald's operational notices are in the table, for the
   * events that name them, but not theirs); the cursor is the last name of the previous page.
   */
  async list(limit: number, after: string | null): Promise<Page<EventTypeRecord>> {
    const notOperational = { notIn: [...OPERATIONAL_EVENT_TYPES] };
    const rows = await this.prisma.eventType.findMany({
      where: { name: after === null ? notOperational : { ...notOperational, gt: after } },
      orderBy: { name: 'asc' },
      take: limit + 1,
      select: { name: true, description: true },
    });
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items[items.length - 1].name : null };
  }

  /** Whether customers may use `name` (subscribe to it, publish it). */
  async exists(name: string): Promise<boolean> {
    if (isOperationalEventType(name)) return false;
    return (await this.prisma.eventType.count({ where: { name } })) > 0;
  }

  /** `name_taken`: the catalogue has an event type of that name already. */
  async create(eventType: EventTypeRecord): Promise<EventTypeRecord | 'name_taken'> {
    try {
      return await this.prisma.eventType.create({ data: eventType, select: { name: true, description: true } });
    } catch (error) {
      if (classifyDatabaseError(error) === 'unique_violation') return 'name_taken';
      throw error;
    }
  }
}
