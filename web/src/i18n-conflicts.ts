// The move/copy dialogs' choice for names already at the destination, and the recursive move
// (components/fileOps.tsx), merged into the dictionary of i18n.ts.
export const CONFLICT_MESSAGES = {
  'conflict.legend': 'If a name is already there',
  'conflict.stop': 'Stop: change nothing',
  'conflict.overwrite': 'Overwrite it',
  'conflict.skip': 'Skip it, carry on with the others',
  'conflict.merge': 'Merge folders: copy what they lack',
  'rmove': 'Move all its files to…',
  'rmove.title': 'Move every file of {name} to',
  'rmove.hint': 'Every file below the folder goes straight into the folder chosen (sub-folders are not kept).',
  'done.rmove': 'Moved the files of {name} to {dst}',
} as const;
