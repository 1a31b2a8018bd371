import { describe, expect, it } from 'vitest';
import { parsePerfScript } from '../bench/edge-perf.js';

// `perf script -F tid,ip,sym,dso` right-aligns the tid, so a sample's header line can start with
// spaces; its frames are tab-indented.
const SCRIPT = [
  ' 6765 ',
  '\t         100c947 v8::internal::String::WriteToFlat<unsigned char> (/usr/bin/node)',
  '\t    7fc3c01d1f47 JS:*toWritable /work/main/node_modules/ioredis/built/Command.js:111:15 (/tmp/perf-6765.map)',
  '',
  '16771 ',
  '\t          7bbbe6 node::SpinEventLoopInternal (/usr/bin/node)',
  '',
].join('\n');

describe('edge-perf: perf script parsing', () => {
  it('reads a sample whose tid is padded with spaces, and its frames', () => {
    const samples = parsePerfScript(SCRIPT);
    expect(samples.map((sample) => sample.tid)).toEqual([6765, 16771]);
    expect(samples[0].frames).toEqual([
      { sym: 'v8::internal::String::WriteToFlat<unsigned char>', dso: '/usr/bin/node' },
      { sym: 'JS:*toWritable /work/main/node_modules/ioredis/built/Command.js:111:15', dso: '/tmp/perf-6765.map' },
    ]);
    expect(samples[1].frames).toEqual([{ sym: 'node::SpinEventLoopInternal', dso: '/usr/bin/node' }]);
  });
});
