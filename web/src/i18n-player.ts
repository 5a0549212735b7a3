// The video player's tools (components/PlayerTools.tsx), merged into the dictionary of i18n.ts.
export const PLAYER_MESSAGES = {
  'player.tools': 'Player tools',
  'player.subtitle_offset': 'Subtitle offset',
  'player.subtitle_earlier': 'Show subtitles 0.1 s earlier',
  'player.subtitle_later': 'Show subtitles 0.1 s later',
  'player.subtitle_reset': 'Reset offset',
  'player.flip': 'Mirror',
} as const;
