// The online office view's strings (components/OfficeView.tsx), merged into the dictionary of i18n.ts.
export const OFFICE_MESSAGES = {
  'office.editing': 'Editing',
  'office.viewing': 'Read-only',
  'office.in': 'in {service}',
  'office.service': 'Online office',
  'office.fullscreen': 'Full screen',
  'office.frame': '{name} in {service}',
  'office.opening': 'Opening in {service}…',
} as const;
