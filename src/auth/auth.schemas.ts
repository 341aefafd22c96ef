import { z } from 'zod';
import '../http/openapi';

export const LoginBody = z.object({
  email: z.string().trim().min(1, 'is required').max(320),
  password: z.string().min(1, 'is required').max(1024),
});

/** A token lives 90 days unless asked otherwise, and at most a year: the API makes no never-expiring token. */
export const TOKEN_DEFAULT_DAYS = 90;
export const TOKEN_MAX_DAYS = 365;

export const CreateToken = z.object({
  name: z.string().trim().min(1, 'is required').max(100),
  expiresInDays: z
    .number()
    .int()
    .min(1)
    .max(TOKEN_MAX_DAYS, `must be at most ${TOKEN_MAX_DAYS}`)
    .default(TOKEN_DEFAULT_DAYS)
    .openapi({
      description: `Days until the token expires (default ${TOKEN_DEFAULT_DAYS}, at most ${TOKEN_MAX_DAYS})`,
    }),
});

export const TokenIdParams = z.object({ id: z.coerce.number().int().positive().max(2_147_483_647) });

export const Token = z
  .object({
    id: z.number(),
    name: z.string(),
    createdAt: z.string(),
    expiresAt: z.string(),
    lastUsedAt: z.string().nullable(),
  })
  .openapi('ApiToken');
export type Token = z.infer<typeof Token>;
export const TokenList = z.array(Token);
export const CreatedToken = Token.omit({ lastUsedAt: true }).extend({ token: z.string() }).openapi('CreatedApiToken');
export type CreatedToken = z.infer<typeof CreatedToken>;

export const SsoStatus = z
  .object({ ssoEnabled: z.boolean(), ssoProvider: z.string().nullable(), localAuthEnabled: z.boolean() })
  .openapi('SsoStatus');
export type SsoStatus = z.infer<typeof SsoStatus>;

export const FailedSignIn = z
  .object({
    at: z.string().openapi({ description: 'When the attempt was made (ISO 8601)' }),
    ipAddress: z.string().nullable().openapi({ description: 'The client address the attempt came from' }),
    userAgent: z.string().nullable().openapi({ description: "The client's User-Agent header, as sent" }),
    reason: z.enum(['wrong_password', 'rate_limited']).openapi({
      description: 'wrong_password, or rate_limited: refused by the sign-in limits (recorded once per window)',
    }),
  })
  .openapi('FailedSignIn');
export type FailedSignIn = z.infer<typeof FailedSignIn>;
export const FailedSignInList = z.object({ failedSignIns: z.array(FailedSignIn) }).openapi('FailedSignInList');
export type FailedSignInList = z.infer<typeof FailedSignInList>;

/** GET /api/logout's answer to a cross-site request: the page with the Sign out button (text/html). */
export const SignOutPage = z.string().openapi({ description: 'An HTML page' });
