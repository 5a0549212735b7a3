// The archive view's strings (components/ArchiveView.tsx), merged into the dictionary of i18n.ts.
export const ARCHIVE_MESSAGES = {
  'archive.contents': 'Archive contents',
  'archive.encrypted': 'Encrypted',
  'archive.password': 'Archive password',
  'archive.password_needed': 'This archive needs a password',
  'archive.unlock': 'Open',
  'archive.up': 'Up',
  'archive.empty': 'This folder of the archive is empty',
  'archive.extract_here': 'Extract here',
  'archive.extract_to': 'Extract to…',
  'archive.extract_pick': 'Extract into folder',
  'archive.extracting': 'Extracting: {progress} %',
  'archive.uploading': 'Storing the extracted files: {progress} %',
  'archive.extracted': 'Extracted to {dir}',
  'archive.failed': 'Extraction failed: {error}',
  'archive.download': 'Download',
  'archive.close_preview': 'Close preview',
} as const;
