import { Router } from 'express';
import type { Deps } from '../deps';

export function salesPages(_deps: Deps): Router {
  const pages = Router();
  return pages;
}
