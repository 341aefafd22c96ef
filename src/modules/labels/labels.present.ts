import type { LabelLayout } from './labels.layouts';
import type { LabelLayoutBody } from './labels.schemas';

/** A label layout as the API shows it (its drawing settings stay inside). */
export const presentLabelLayout = (layout: LabelLayout): LabelLayoutBody => ({
  id: layout.id,
  name: layout.name,
  pageWidthMm: layout.pageWidthMm,
  pageHeightMm: layout.pageHeightMm,
  columns: layout.columns,
  rows: layout.rows,
  labelWidthMm: layout.labelWidthMm,
  labelHeightMm: layout.labelHeightMm,
  marginTopMm: layout.marginTopMm,
  marginLeftMm: layout.marginLeftMm,
  pitchXMm: layout.pitchXMm,
  pitchYMm: layout.pitchYMm,
});
