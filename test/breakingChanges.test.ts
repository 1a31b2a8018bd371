import { describe, expect, it } from 'vitest';
import { breakingChanges, type VersionOperation } from '../shared/contracts/breakingChanges.js';

// The console's "breaking changes" between the active contract version and a new one (issue 31):
// a pure function over the two versions' operation schemas.

const KEY = 'GET /orders/{id}:response:200';
const op = (schema: Record<string, unknown>, operationKey = KEY): VersionOperation => ({ operationKey, schema });

const order = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'string' },
    total: { type: 'number' },
    status: { type: 'string', enum: ['open', 'paid'] },
    lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } } } },
  },
};

describe('breakingChanges', () => {
  it('finds nothing between a version and itself, nor when the new one only widens', () => {
    expect(breakingChanges([op(order)], [op(order)])).toEqual([]);
    const wider = {
      ...order,
      required: [],
      properties: {
        ...order.properties,
        total: { type: ['number', 'string'] },
        status: { type: 'string', enum: ['open', 'paid', 'void'] },
        note: { type: 'string' },
      },
    };
    expect(breakingChanges([op(order)], [op(wider), op({}, 'POST /orders:request:default')])).toEqual([]);
    // An integer field that becomes a number is wider, not narrower.
    expect(breakingChanges([op({ type: 'integer' })], [op({ type: 'number' })])).toEqual([]);
  });

  it('reports a removed operation, sorted by operation key', () => {
    const other = 'DELETE /orders/{id}:response:204';
    expect(breakingChanges([op(order), op({}, other)], [])).toEqual([
      { kind: 'operation_removed', operationKey: other },
      { kind: 'operation_removed', operationKey: KEY },
    ]);
  });

  it('reports removed and newly required fields, down properties and array items', () => {
    const next = {
      type: 'object',
      required: ['id', 'total'],
      properties: {
        id: { type: 'string' },
        total: { type: 'number' },
        status: { type: 'string', enum: ['open', 'paid'] },
        lines: { type: 'array', items: { type: 'object', required: ['qty'], properties: { qty: { type: 'integer' } } } },
      },
    };
    expect(breakingChanges([op(order)], [op(next)])).toEqual([
      { kind: 'field_removed', operationKey: KEY, path: 'lines[].sku' },
      { kind: 'field_newly_required', operationKey: KEY, path: 'lines[].qty' },
      { kind: 'field_newly_required', operationKey: KEY, path: 'total' },
    ]);
  });

  it('reports narrowed types and enumerations with what they were and are', () => {
    const next = {
      ...order,
      properties: {
        ...order.properties,
        id: { type: 'integer' },
        total: { type: 'integer' },
        status: { type: 'string', enum: ['paid'] },
      },
    };
    expect(breakingChanges([op(order)], [op(next)])).toEqual([
      { kind: 'type_narrowed', operationKey: KEY, path: 'id', from: 'string', to: 'integer' },
      { kind: 'type_narrowed', operationKey: KEY, path: 'status', from: '"open" | "paid"', to: '"paid"' },
      { kind: 'type_narrowed', operationKey: KEY, path: 'total', from: 'number', to: 'integer' },
    ]);
    // A field of any type that gets one, and a payload that loses null.
    expect(breakingChanges([op({ type: ['object', 'null'] })], [op({ type: 'object' })])).toEqual([
      { kind: 'type_narrowed', operationKey: KEY, path: '(payload)', from: 'null | object', to: 'object' },
    ]);
    expect(breakingChanges([op({ properties: { a: {} } })], [op({ properties: { a: { enum: [1] } } })])).toEqual([
      { kind: 'type_narrowed', operationKey: KEY, path: 'a', from: 'any', to: '1' },
    ]);
  });

  it('follows $defs references on both sides and stops on a recursive one', () => {
    const before = {
      $ref: '#/$defs/Node',
      $defs: {
        Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } } },
      },
    };
    const after = {
      $ref: '#/$defs/Node',
      $defs: { Node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/Node' } } } } },
    };
    // The recursion is compared once: the definition's difference is reported where it is first met.
    expect(breakingChanges([op(before)], [op(after)])).toEqual([{ kind: 'field_removed', operationKey: KEY, path: 'name' }]);
    const tree = { type: 'object', required: ['children'], properties: { children: { type: 'array', items: { $ref: '#/$defs/Tree' } } } };
    const renamed = { $ref: '#/$defs/Tree', $defs: { Tree: tree } };
    expect(breakingChanges([op(before)], [op(renamed)])).toEqual([
      { kind: 'field_removed', operationKey: KEY, path: 'name' },
      { kind: 'field_newly_required', operationKey: KEY, path: 'children' },
    ]);
  });
});
