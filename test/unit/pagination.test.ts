import { describe, expect, it } from 'vitest';
import { limitParam, pageInfo, PageParam } from '../../src/http/pagination';

const issue = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.success ? undefined : result.error?.issues.map((i) => i.message);

describe('page and limit of a list', () => {
  it('reads page from the query string, 1 when absent', () => {
    expect(PageParam.parse(undefined)).toBe(1);
    expect(PageParam.parse('3')).toBe(3);
    expect(PageParam.parse('2147483647')).toBe(2_147_483_647);
  });

  it('refuses a page that is not a positive int4', () => {
    for (const page of ['0', '-1', '1.5', 'abc']) {
      expect(issue(PageParam.safeParse(page)), page).toEqual(['must be a positive integer']);
    }
    expect(issue(PageParam.safeParse('2147483648'))).toEqual(['is too large']);
  });

  it("reads limit within the list's bounds, its default when absent", () => {
    const limit = limitParam(20, 100);
    expect(limit.parse(undefined)).toBe(20);
    expect(limit.parse('1')).toBe(1);
    expect(limit.parse('100')).toBe(100);
    for (const value of ['0', '101', '2.5', 'ten', '-5']) {
      expect(issue(limit.safeParse(value)), value).toEqual(['must be an integer between 1 and 100']);
    }
  });

  it('counts the pages, a partial last page included', () => {
    expect(pageInfo(1, 20, 0)).toEqual({ page: 1, limit: 20, total: 0, totalPages: 0 });
    expect(pageInfo(1, 20, 1)).toMatchObject({ totalPages: 1 });
    expect(pageInfo(2, 20, 40)).toMatchObject({ totalPages: 2 });
    expect(pageInfo(3, 20, 41)).toMatchObject({ page: 3, totalPages: 3 });
  });
});
