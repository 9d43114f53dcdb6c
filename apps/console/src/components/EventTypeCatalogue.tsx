import type { Schemas } from '@herald/client';
import { schemaFieldRows } from '../lib/schema-fields';
import { JsonBlock } from './JsonBlock';

type EventType = Schemas['EventTypeDto'];

/**
 * The event-type catalogue where a receiver's owner chooses subscriptions (PRODUCT.md §15): each
 * type's description, its payload schema as readable fields, and its example, one disclosure per
 * type so the list stays short.
 */
export function EventTypeCatalogue({ types, subscribed }: { types: EventType[]; subscribed: ReadonlySet<string> }) {
  return (
    <section className="card" aria-labelledby="catalogue-heading">
      <h2 id="catalogue-heading">Event catalogue</h2>
      <p className="muted">
        What each event means and what its payload carries: your endpoint receives the payload as <code>data</code>.
      </p>
      <ul className="catalogue">
        {types.map((type) => (
          <li key={type.name}>
            <details>
              <summary>
                <code>{type.name}</code> <SchemaBadge type={type} />
                {subscribed.has(type.name) && <span className="badge badge-ok">subscribed</span>}
                {type.description && <span className="catalogue-description">{type.description}</span>}
              </summary>
              <EventTypeDetails type={type} />
            </details>
          </li>
        ))}
      </ul>
    </section>
  );
}

function SchemaBadge({ type }: { type: EventType }) {
  if (!type.schema) return null;
  return type.enforce ? (
    <span className="badge badge-neutral" title="Herald refuses a payload that does not match this schema, so every delivery matches it">
      schema enforced
    </span>
  ) : (
    <span className="badge badge-neutral" title="The schema documents the payload; Herald does not check it">
      schema documented
    </span>
  );
}

/** One event type's fields, example and full schema. */
export function EventTypeDetails({ type }: { type: EventType }) {
  const rows = type.schema ? schemaFieldRows(type.schema) : [];
  return (
    <div className="event-type-details">
      {!type.schema && <p className="muted">No schema: the payload is whatever the platform sends with this event.</p>}
      {type.schema && (
        <>
          <p className="muted">
            {type.enforce
              ? 'Every payload of this event matches the schema below: Herald refuses the others when they are published.'
              : 'The schema below describes the payload; Herald does not check it.'}
          </p>
          {rows.length > 0 && (
            <div className="table-scroll" tabIndex={0} role="region" aria-label={`Fields of ${type.name}`}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Field</th>
                    <th scope="col">Type</th>
                    <th scope="col">Required</th>
                    <th scope="col">Rules and meaning</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => (
                    <tr key={row.path}>
                      <td>
                        <code>{row.path}</code>
                      </td>
                      <td>{row.type}</td>
                      <td>{row.required ? 'required' : 'optional'}</td>
                      <td>{[...row.rules, row.description].filter(Boolean).join('; ') || '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
      {type.example && (
        <>
          <h3>Example payload</h3>
          <JsonBlock value={type.example} label={`Example payload of ${type.name}`} />
        </>
      )}
      {type.schema && (
        <details>
          <summary>JSON Schema</summary>
          <JsonBlock value={type.schema} label={`JSON Schema of ${type.name}`} />
        </details>
      )}
    </div>
  );
}
