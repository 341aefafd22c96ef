import { z } from 'zod';
import '../../http/openapi';
import { ItemSource } from '../sources/sources.schemas';

/** Client-supplied: 1-64 URL-safe characters (letters, digits, '.', '_', '~', '-'). */
export const SupplierIdValue = z
  .string()
  .trim()
  .min(1, { error: 'is required' })
  .max(64, { error: 'must be at most 64 characters' })
  .regex(/^[A-Za-z0-9._~-]+$/, { error: "must be URL-safe: letters, digits, '.', '_', '~' or '-'" });

export const SupplierParams = z.object({ id: SupplierIdValue });

const optionalText = (max: number) => z.string().trim().max(max).nullish();

const SupplierFields = {
  name: z.string().trim().min(1, { error: 'is required' }).max(200),
  contact: optionalText(200),
  email: z
    .union([z.email({ error: 'must be a valid email address' }), z.literal('')])
    .nullish()
    .transform((v) => (v === '' ? null : v)),
  phone: optionalText(50),
  address: optionalText(1000),
};

export const CreateSupplier = z.object({ id: SupplierIdValue, ...SupplierFields }).openapi('CreateSupplier');
export type CreateSupplier = z.infer<typeof CreateSupplier>;

export const UpdateSupplier = z
  .object(SupplierFields)
  .partial()
  .refine((v) => Object.values(v).some((x) => x !== undefined), { error: 'at least one field is required' })
  .openapi('UpdateSupplier');
export type UpdateSupplier = z.infer<typeof UpdateSupplier>;

export const Supplier = z
  .object({
    id: z.string(),
    name: z.string(),
    contact: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    address: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Supplier');
export type Supplier = z.infer<typeof Supplier>;

export const SupplierList = z.array(Supplier);

export const SupplierWithItems = Supplier.extend({ items: z.array(ItemSource) }).openapi('SupplierWithItems');

export const SupplierDeletionCheck = z
  .object({
    canDelete: z.boolean(),
    reasons: z
      .array(z.string())
      .openapi({ description: 'why a safe delete would be refused; empty when it would succeed' }),
  })
  .openapi('SupplierDeletionCheck');
export type SupplierDeletionCheck = z.infer<typeof SupplierDeletionCheck>;

/** A delete refused while records reference the supplier. */
export const SupplierRefused = z.object({ message: z.string(), reasons: z.array(z.string()) });
