import { HERALD_NODE_FLAGS, heraldNodeFlagsFor, nodeOptionsFlags } from './node-flags';

describe("Herald's Node flags", () => {
  it('adds every flag the launch does not have yet', () => {
    expect(heraldNodeFlagsFor([])).toEqual(['--max-semi-space-size=16']);
    expect(heraldNodeFlagsFor(['--cpu-prof', '--max-old-space-size=512'])).toEqual([...HERALD_NODE_FLAGS]);
  });

  it('leaves an operator’s own value alone, in either spelling', () => {
    expect(heraldNodeFlagsFor(['--max-semi-space-size=64'])).toEqual([]);
    expect(heraldNodeFlagsFor(nodeOptionsFlags('--enable-source-maps --max_semi_space_size=8'))).toEqual([]);
  });

  it('reads the flags of NODE_OPTIONS', () => {
    expect(nodeOptionsFlags(undefined)).toEqual([]);
    expect(nodeOptionsFlags('  --a=1   --b  ')).toEqual(['--a=1', '--b']);
  });
});
