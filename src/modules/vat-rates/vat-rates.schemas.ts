import { z } from 'zod';
import '../../http/openapi';
import { decimalString, IntId } from '../../http/validate';

export const VatRate = z
  .object({
    id: z.number().int(),
    name: z.string(),
    rate: z.number().openapi({ description: 'a fraction, e.g. 0.2 for 20%' }),
    isDefault: z.boolean(),
    createdAt: z.string().datetime(),
    updatedAt: z.string().datetime(),
  })
  .openapi('VatRate');
export type VatRate = z.infer<typeof VatRate>;
export const VatRateList = z.object({ rates: z.array(VatRate) });
export type VatRateList = z.infer<typeof VatRateList>;

const RateValue = decimalString({ places: 4, min: 0, max: 1 }).openapi({
  type: 'number',
  description: 'a fraction between 0 and 1 with at most 4 decimal places (a number or a decimal string)',
});

export const CreateVatRate = z
  .object({
    name: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }).max(100),
    rate: RateValue,
    isDefault: z.boolean().optional().default(false),
  })
  .openapi('CreateVatRate');
export type CreateVatRate = z.infer<typeof CreateVatRate>;

export const UpdateVatRate = z
  .object({
    name: z.string().trim().min(1, { error: 'must not be empty' }).max(100).optional(),
    rate: RateValue.optional(),
    isDefault: z.boolean().optional(),
  })
  .refine((v) => v.name !== undefined || v.rate !== undefined || v.isDefault !== undefined, {
    error: 'at least one of name, rate, isDefault is required',
  })
  .openapi('UpdateVatRate');
export type UpdateVatRate = z.infer<typeof UpdateVatRate>;

export const RateIdParams = z.object({ rateId: IntId });
