import type { Router } from 'express';
import type { Deps } from '../deps';
import { HazardRegisterQuery } from '../modules/hazard-register/hazard-register.schemas';
import { hazardRegisterService } from '../modules/hazard-register/hazard-register.service';
import { pictogramImage } from '../modules/hazards/hazards.service';
import { PageRouter } from './page-route';

/**
 * Issue 43: `/reports/hazards`, the hazard register as a page that prints on A4 (managers, as GET
 * /api/reports/hazards): every hazardous item holding stock with its pictograms, statements, lots and
 * their expiry, and its current safety data sheet.
 */
export function hazardRegisterPages({ db, reads }: Deps): Router {
  const pages = new PageRouter(db);

  pages.get('/reports/hazards', { access: 'manager', query: HazardRegisterQuery }, async (req, res) => {
    const { sds } = req.input.query;
    // a register tolerates a little lag: a read replica when one is healthy and has the caller's own writes (issue 44)
    const register = await hazardRegisterService(reads.forReports(req)).register({ sds });
    res.locals.stylesheets = ['/assets/css/reports.css'];
    res.render('reports/hazards', {
      title: 'Hazard register',
      description: 'Every hazardous item holding stock, with its hazards, lots, expiry and safety data sheet.',
      generatedAt: new Date(register.generatedAt),
      years: register.sdsReviewYears,
      sds: sds ?? '',
      csvHref: `/api/reports/hazards?format=csv${sds ? `&sds=${sds}` : ''}`,
      items: register.items.map((item) => ({
        ...item,
        hazard: {
          signalWord: item.signalWord,
          pictograms: item.pictograms.map((p) => ({ ...p, image: pictogramImage(p.code) })),
        },
      })),
    });
  });

  return pages.router;
}
