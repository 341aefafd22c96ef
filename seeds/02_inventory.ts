import type { Knex } from 'knex';
import { SYSTEM_ACTOR } from '../src/modules/audit/audit.actor';
import { itemsService } from '../src/modules/items/items.service';
import type { CreateItem } from '../src/modules/items/items.schemas';

/** Demo inventory: categories, VAT rates besides the migration's 'Standard', and ~30 items with opening stock. */
const CATEGORIES = [
  { name: 'Glassware', description: 'Beakers, flasks and cylinders', icon: 'fa-flask', color: 'blue' },
  { name: 'Chemicals', description: 'Solvents and reagents', icon: 'fa-vial', color: 'red' },
  { name: 'Consumables', description: 'Gloves, tips, tubes and wipes', icon: 'fa-box', color: 'green' },
  { name: 'Electronics', description: 'Components and test equipment', icon: 'fa-microchip', color: 'purple' },
  { name: 'Stationery', description: 'Lab books, labels and pens', icon: 'fa-pen', color: 'orange' },
];

const VAT_RATES = [
  { name: 'Reduced', rate: '0.0500' },
  { name: 'Zero', rate: '0.0000' },
];

// [name, sku, category, price, stock, minimum, vatRate?]
const ITEMS: [string, string, string, string, number, number, string?][] = [
  ['Beaker 250 ml', 'GLS-BK-250', 'Glassware', '3.20', 48, 10],
  ['Beaker 600 ml', 'GLS-BK-600', 'Glassware', '4.75', 30, 10],
  ['Conical flask 500 ml', 'GLS-CF-500', 'Glassware', '6.40', 22, 8],
  ['Measuring cylinder 100 ml', 'GLS-MC-100', 'Glassware', '7.90', 12, 5],
  ['Volumetric flask 1 L', 'GLS-VF-1000', 'Glassware', '18.50', 4, 5],
  ['Petri dish (pack of 20)', 'GLS-PD-20', 'Glassware', '9.99', 60, 15],
  ['Ethanol absolute 2.5 L', 'CHM-ETH-25', 'Chemicals', '42.00', 8, 4],
  ['Acetone 1 L', 'CHM-ACE-1', 'Chemicals', '14.30', 3, 4],
  ['Sodium chloride 500 g', 'CHM-NACL-500', 'Chemicals', '6.80', 25, 5],
  ['Hydrochloric acid 1 M, 1 L', 'CHM-HCL-1M', 'Chemicals', '11.20', 10, 3],
  ['Agar powder 500 g', 'CHM-AGAR-500', 'Chemicals', '58.00', 2, 2],
  ['Distilled water 5 L', 'CHM-H2O-5', 'Chemicals', '4.50', 40, 10, '0.0000'],
  ['Nitrile gloves M (box 100)', 'CON-GLV-M', 'Consumables', '7.25', 120, 30],
  ['Nitrile gloves L (box 100)', 'CON-GLV-L', 'Consumables', '7.25', 18, 30],
  ['Pipette tips 1000 µl (rack)', 'CON-TIP-1000', 'Consumables', '12.60', 75, 20],
  ['Microcentrifuge tubes 1.5 ml (500)', 'CON-MCT-15', 'Consumables', '15.40', 9, 10],
  ['Lint-free wipes (box)', 'CON-WIPE', 'Consumables', '5.10', 64, 12],
  ['Weighing boats (pack 500)', 'CON-WB-500', 'Consumables', '19.95', 0, 4],
  ['Parafilm roll', 'CON-PARA', 'Consumables', '31.00', 6, 3],
  ['Resistor kit 600 pcs', 'ELC-RES-600', 'Electronics', '12.99', 14, 3],
  ['Breadboard 830 points', 'ELC-BB-830', 'Electronics', '4.20', 35, 10],
  ['Jumper wires (pack 120)', 'ELC-JMP-120', 'Electronics', '3.60', 50, 10],
  ['Digital multimeter', 'ELC-DMM', 'Electronics', '24.50', 7, 2],
  ['Arduino Uno R3', 'ELC-UNO', 'Electronics', '21.00', 12, 5],
  ['Soldering iron 60 W', 'ELC-SOL-60', 'Electronics', '18.75', 1, 2],
  ['Lab notebook A4', 'STA-NB-A4', 'Stationery', '6.50', 80, 20, '0.0000'],
  ['Cryo labels (roll 1000)', 'STA-LBL-CRYO', 'Stationery', '22.40', 5, 2],
  ['Permanent marker, black', 'STA-MRK-BLK', 'Stationery', '1.10', 150, 40],
  ['Safety data sheet binder', 'STA-SDS', 'Stationery', '8.90', 10, 2],
  ['Sticky notes (pack 12)', 'STA-NOTE-12', 'Stationery', '4.80', 24, 6, '0.0500'],
];

/** Issue 43: the hazard data of the demo chemicals, as their suppliers' safety data sheets give it. */
const none: NonNullable<CreateItem['hazard']> = {
  signalWord: null,
  pictograms: [],
  hStatements: [],
  pStatements: [],
  casNumber: null,
  unNumber: null,
  storage: null,
};
const HAZARDS: Record<string, CreateItem['hazard']> = {
  'CHM-ETH-25': {
    ...none,
    signalWord: 'Danger',
    pictograms: ['GHS02', 'GHS07'],
    hStatements: ['H225', 'H319'],
    pStatements: ['P210', 'P233', 'P240', 'P241', 'P305+P351+P338', 'P403+P235'],
    casNumber: '64-17-5',
    unNumber: '1170',
    storage: 'Flammables cabinet, away from oxidisers',
  },
  'CHM-ACE-1': {
    ...none,
    signalWord: 'Danger',
    pictograms: ['GHS02', 'GHS07'],
    hStatements: ['H225', 'H319', 'H336', 'EUH066'],
    pStatements: ['P210', 'P240', 'P305+P351+P338', 'P403+P233'],
    casNumber: '67-64-1',
    unNumber: '1090',
    storage: 'Flammables cabinet',
  },
  'CHM-HCL-1M': {
    ...none,
    signalWord: 'Warning',
    pictograms: ['GHS05'],
    hStatements: ['H290'],
    pStatements: ['P234', 'P390'],
    casNumber: '7647-01-0',
    storage: 'Acids cabinet, away from bases',
  },
};

export async function seed(knex: Knex): Promise<void> {
  const categoryIds = new Map<string, number>();
  for (const c of CATEGORIES) {
    const existing = await knex('categories').whereRaw('lower(name) = lower(?)', [c.name]).first('id');
    const id = existing ? existing.id : (await knex('categories').insert(c).returning('id'))[0].id;
    categoryIds.set(c.name, id);
  }

  for (const r of VAT_RATES) {
    if (!(await knex('vat_rates').where({ name: r.name }).first('id')))
      await knex('vat_rates').insert({ ...r, is_default: false });
  }

  const creator: { id: string; email: string } | undefined =
    (await knex('users').where({ email: 'manager@example.ac.uk' }).first('id', 'email')) ??
    (await knex('users').where({ role: 'admin' }).orderBy('created_at').first('id', 'email'));
  const items = itemsService(knex);
  for (const [name, sku, category, price, stock, minimum, vatRate] of ITEMS) {
    if (await knex('items').where({ sku }).first('id')) continue;
    await items.create(
      {
        name,
        sku,
        description: null,
        categoryId: categoryIds.get(category)!,
        price,
        vatRate: vatRate ?? null,
        tracking: 'none',
        currentStock: String(stock),
        minimumStock: String(minimum),
        hazard: HAZARDS[sku] ?? null,
      },
      { ...SYSTEM_ACTOR, userId: creator?.id ?? null, email: creator?.email ?? null },
    );
  }
}
