import { describe, expect, it } from 'vitest';
import { containsPattern } from '../../src/db/like-pattern';

describe('ILIKE pattern for a search term', () => {
  it('matches the term anywhere', () => {
    expect(containsPattern('bolt')).toBe('%bolt%');
    expect(containsPattern('')).toBe('%%');
  });

  it("takes the term's own wildcards and escape character literally", () => {
    expect(containsPattern('50%')).toBe('%50\\%%');
    expect(containsPattern('M6_x')).toBe('%M6\\_x%');
    expect(containsPattern('C:\\tmp')).toBe('%C:\\\\tmp%');
    expect(containsPattern('%_\\')).toBe('%\\%\\_\\\\%');
  });

  it('leaves other characters, quotes included, to the bound parameter', () => {
    expect(containsPattern("O'Brien [a-z]*")).toBe("%O'Brien [a-z]*%");
  });
});
