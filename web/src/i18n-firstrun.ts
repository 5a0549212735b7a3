// The first-run card's strings (components/FirstRun.tsx), merged into the dictionary of i18n.ts.
export const FIRSTRUN_MESSAGES = {
  'firstrun.title': 'Welcome to your new file server',
  'firstrun.text': 'Three first steps:',
  'firstrun.storage': 'Add a storage: the folders, buckets or servers to share',
  'firstrun.notice': 'Change the notice shown above the files',
  'firstrun.notice_done': 'Site settings: title, notice, logo',
  'firstrun.users': 'Make accounts for the people who use it',
  'firstrun.dismiss': 'Dismiss',
} as const;
