import { describe, expect, it } from 'vitest';
import { SharedSlots, copyBytes, slotView } from '../ingest/offload/sharedSlots.js';

// The slots of shared memory that bodies and rows use (ingest/offload/sharedSlots.ts): each slot has at
// most one holder, only the view handed out gives it back, and a view sees the shared bytes.

describe('SharedSlots', () => {
  it('hands out views of distinct slots until none is free, and refuses a length over a slot', () => {
    const slots = new SharedSlots(3, 16);
    expect(slots.take(17)).toBeNull();
    const views = [slots.take(16)!, slots.take(1)!, slots.take(0)!];
    expect(views.map((view) => view.length)).toEqual([16, 1, 0]);
    expect(new Set(views.map((view) => slots.slotOf(view))).size).toBe(3);
    expect(views.every((view) => view.buffer === slots.memory)).toBe(true);
    expect(slots.available).toBe(0);
    expect(slots.take(1)).toBeNull();
    const freed = slots.slotOf(views[1]);
    slots.give(views[1]);
    expect(slots.available).toBe(1);
    expect(slots.slotOf(views[1])).toBe(-1);
    expect(slots.slotOf(slots.take(4)!)).toBe(freed);
  });

  it('gives a slot back once, whatever is given twice, and ignores memory of its own', () => {
    const slots = new SharedSlots(2, 8);
    const first = slots.take(8)!;
    slots.give(first);
    slots.give(first);
    expect(slots.available).toBe(2);
    // The slot's new holder keeps it when a stale view of it is given back.
    const again = [slots.take(8)!, slots.take(8)!];
    slots.give(first);
    expect(slots.available).toBe(0);
    expect(again.map((view) => slots.slotOf(view)).sort()).toEqual([0, 1]);
    slots.give(Buffer.alloc(8));
    slots.give(again[0].subarray(0, 4));
    expect(slots.available).toBe(0);
  });

  it('replaces the view of a slot in use with a shorter one, which alone gives it back', () => {
    const slots = new SharedSlots(1, 8);
    const view = slots.take(8)!;
    view.write('abcdefgh');
    const shorter = slots.resize(view, 3);
    expect(shorter.toString()).toBe('abc');
    slots.give(view);
    expect(slots.available).toBe(0);
    slots.give(shorter);
    expect(slots.available).toBe(1);
    expect(() => slots.resize(shorter, 2)).toThrow('not a slot in use');
  });

  it('shows the same bytes to every view of a slot', () => {
    const slots = new SharedSlots(2, 8);
    slots.take(8);
    const view = slots.take(5)!;
    view.write('hello');
    expect(slotView(slots, slots.slotOf(view), 5).toString()).toBe('hello');
    expect(slotView(slots, 1 - slots.slotOf(view), 5).toString()).not.toBe('hello');
  });
});

describe('copyBytes', () => {
  it('copies exactly the source into and out of shared memory at any offset, and nothing for an empty source', () => {
    const slots = new SharedSlots(1, 64);
    const slot = slots.take(64)!;
    const source = Buffer.from(Array.from({ length: 20 }, (_, n) => n + 1));
    for (let offset = 0; offset <= 44; offset += 1) {
      slot.fill(0);
      expect(copyBytes(source, slot, offset)).toBe(20);
      expect(slot.subarray(offset, offset + 20).equals(source)).toBe(true);
      expect(slot.subarray(0, offset).every((byte) => byte === 0) && slot.subarray(offset + 20).every((byte) => byte === 0)).toBe(true);
      const back = Buffer.alloc(30);
      expect(copyBytes(slot.subarray(offset, offset + 20), back, 7)).toBe(20);
      expect(back.subarray(7, 27).equals(source)).toBe(true);
    }
    expect(copyBytes(Buffer.alloc(0), slot, 64)).toBe(0);
  });
});
