import { describe, expect, it } from 'vitest';
import {
  PASSWORD_COMMON,
  PASSWORD_ONLY_WHITESPACE,
  PASSWORD_PERSONAL,
  PASSWORD_TOO_SHORT,
  passwordProblem,
} from '../../src/auth/password-rule';

const ann = { email: 'ann.smith@example.org', firstName: 'Ann', lastName: 'Smith' };

describe('the rule for a new password', () => {
  it('takes 12 characters at least', async () => {
    expect(await passwordProblem('Tq8#vLw2!mZ', ann)).toBe(PASSWORD_TOO_SHORT);
    expect(await passwordProblem('', ann)).toBe(PASSWORD_TOO_SHORT);
    expect(await passwordProblem('Tq8#vLw2!mZp', ann)).toBeUndefined();
  });

  it('refuses only spaces, however many', async () => {
    expect(await passwordProblem(' '.repeat(12), ann)).toBe(PASSWORD_ONLY_WHITESPACE);
    expect(await passwordProblem(' \t '.repeat(8), ann)).toBe(PASSWORD_ONLY_WHITESPACE);
  });

  it("refuses the account's email or names with too little else, in any case", async () => {
    expect(await passwordProblem('Ann.Smith2024!', ann)).toBe(PASSWORD_PERSONAL);
    expect(await passwordProblem('ann.smith@example.org!!', ann)).toBe(PASSWORD_PERSONAL);
    expect(await passwordProblem('ANNSMITH-is-here', ann)).toBe(PASSWORD_PERSONAL);
  });

  it('accepts a long phrase that happens to contain a name', async () => {
    expect(await passwordProblem('violet kettle orbit anniversary', ann)).toBeUndefined();
  });

  it('ignores a name too short to refuse', async () => {
    const li = { email: 'li@example.org', firstName: 'Li' };
    expect(await passwordProblem('Li-violet-kettle-orbit', li)).toBeUndefined();
    expect(await passwordProblem('LiVioletKettle', { ...li, lastName: 'Violet' })).toBe(PASSWORD_PERSONAL);
  });

  it('refuses a common or guessable password of any length', async () => {
    expect(await passwordProblem('password1234', ann)).toBe(PASSWORD_COMMON);
    expect(await passwordProblem('qwertyuiopasdfgh', ann)).toBe(PASSWORD_COMMON);
    expect(await passwordProblem('correct horse battery staple', ann)).toBeUndefined();
  });
});
