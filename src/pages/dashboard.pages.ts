import { Router } from 'express';
import type { Deps } from '../deps';

export function dashboardPages(_deps: Deps): Router {
  const pages = Router();
  return pages;
}
