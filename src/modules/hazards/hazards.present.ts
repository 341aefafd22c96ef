import type { Hazard } from './hazards.schemas';
import { isEmptyHazard, type HazardValues } from './hazards.service';

/** An item's hazard as the API answers it: null when nothing is set (see Hazard). */
export function presentHazard(values: HazardValues): Hazard | null {
  if (isEmptyHazard(values)) return null;
  return {
    signalWord: values.signalWord,
    pictograms: values.pictograms as Hazard['pictograms'],
    hStatements: values.hStatements,
    pStatements: values.pStatements,
    casNumber: values.casNumber,
    unNumber: values.unNumber,
    storage: values.storage,
  };
}
