import { PROCESS_VARIABLES } from '../../../src/config/processes';
import { VARIABLES } from '../../../src/config/variables';

describe('PROCESS_VARIABLES', () => {
  it('names only declared variables, each once per process', () => {
    for (const process of PROCESS_VARIABLES) {
      for (const name of process.variables) expect(VARIABLES).toHaveProperty(name);
      expect(new Set(process.variables).size).toBe(process.variables.length);
    }
  });

  it('requires only variables the process reads', () => {
    for (const process of PROCESS_VARIABLES)
      for (const name of process.required) expect(process.variables).toContain(name);
  });

  it('has every declared variable read by some process', () => {
    const read = new Set(PROCESS_VARIABLES.flatMap((process) => process.variables));
    expect(Object.keys(VARIABLES).filter((name) => !read.has(name as never))).toEqual([]);
  });
});
