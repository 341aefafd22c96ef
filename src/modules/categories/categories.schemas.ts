import { z } from 'zod';
import '../../http/openapi';

const COSHH_REQUIRED =
  'issue 43: every item of the category needs a COSHH assessment: a sale, quote processing or request holding one must carry coshhReference';

export const Category = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    icon: z.string().nullable().openapi({ description: 'icon class name, e.g. fa-flask' }),
    color: z.string().nullable().openapi({ description: 'colour name, e.g. blue' }),
    buyerEmails: z.array(z.string()).openapi({
      description:
        'who buys for the category: the daily low-stock digest of its items goes to them (when empty, to the managers); lower case, each once',
    }),
    coshhRequired: z.boolean().openapi({ description: COSHH_REQUIRED }),
    createdAt: z.string().datetime(),
    updatedAt: z.string().datetime(),
  })
  .openapi('Category');
export type Category = z.infer<typeof Category>;

/** The form embedded in item reads. */
export const CategoryRef = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    icon: z.string().nullable(),
    color: z.string().nullable(),
  })
  .openapi('CategoryRef');
export type CategoryRef = z.infer<typeof CategoryRef>;

const optionalText = (max: number) => z.string().trim().max(max).nullish();

/** At most 20 addresses, kept lower case and each once. */
const BuyerEmails = z
  .array(z.string().trim().toLowerCase().email({ error: 'must be an email address' }).max(254), {
    error: 'must be a list of email addresses',
  })
  .max(20, { error: 'must list at most 20 addresses' })
  .transform((emails) => [...new Set(emails)])
  .openapi({
    description: 'who buys for the category: the daily low-stock digest of its items goes to them; [] for the managers',
  });

export const CreateCategory = z
  .object({
    name: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(100),
    description: optionalText(1000),
    icon: optionalText(100),
    color: optionalText(50),
    buyerEmails: BuyerEmails.optional(),
    coshhRequired: z.boolean({ error: 'must be a boolean' }).optional().openapi({ description: COSHH_REQUIRED }),
  })
  .openapi('CreateCategory');
export type CreateCategory = z.infer<typeof CreateCategory>;

export const UpdateCategory = CreateCategory.partial()
  .refine((v) => Object.values(v).some((x) => x !== undefined), { error: 'at least one field is required' })
  .openapi('UpdateCategory');
export type UpdateCategory = z.infer<typeof UpdateCategory>;

export const CategoryDeletionCheck = z
  .object({
    canDelete: z.boolean(),
    reasons: z
      .array(z.string())
      .openapi({ description: 'why a safe delete would be refused; empty when it would succeed' }),
  })
  .openapi('CategoryDeletionCheck');
export type CategoryDeletionCheck = z.infer<typeof CategoryDeletionCheck>;

export const CategoryList = z.array(Category);

/** A refused safe delete: why. */
export const CategoryDeletionRefused = z.object({ message: z.string(), reasons: z.array(z.string()) });
