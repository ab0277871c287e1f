/**
 * What the person opened stays open: an entry redrawn for streamed text or a finished call
 * keeps its tool rows (`<details data-fold>`) as they were, and the Copy button says it copied.
 */

/** Carry the open state of `old`'s folds over to the same folds of `fresh`, in order. */
export function keepFolds(old: Element, fresh: Element): void {
  const all = (root: Element) => [
    ...(root.matches('details[data-fold]') ? [root as HTMLDetailsElement] : []),
    ...root.querySelectorAll<HTMLDetailsElement>('details[data-fold]'),
  ];
  const before = all(old);
  const after = all(fresh);
  before.forEach((fold, index) => {
    if (after[index]) {
      after[index].open = fold.open;
    }
  });
}

/** The Copy button's icon turns to a check for a moment. */
export function copied(button: HTMLElement): void {
  const glyph = button.querySelector('.codicon');
  glyph?.classList.replace('codicon-copy', 'codicon-check');
  button.setAttribute('title', 'Copied');
  setTimeout(() => {
    glyph?.classList.replace('codicon-check', 'codicon-copy');
    button.setAttribute('title', 'Copy');
  }, 1500);
}
