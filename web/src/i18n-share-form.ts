// The share dialog's further fields (shares/ShareDialog.tsx), merged into the dictionary of i18n.ts.
export const SHARE_FORM_MESSAGES = {
  'share.custom_id': 'Custom link name (empty: a random one)',
  'share.custom_id_hint': 'Letters, digits, _ and -, at most 64',
  'share.header': 'Header (shown above the shared files)',
  'share.readme': 'Description (shown below the shared files)',
  'share.markdown_hint': 'Markdown',
} as const;
