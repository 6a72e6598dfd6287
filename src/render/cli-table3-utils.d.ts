/** cli-table3's own width of a cell's text (ANSI codes left out, wide characters counted twice). */
declare module 'cli-table3/src/utils.js' {
  const utils: { strlen(text: string): number };
  export default utils;
}
