/** VS Code's own commands the extension runs. */

/**
 * Opens the Problems view and focuses it. Not `workbench.actions.view.problems` (the panel's
 * own "Problems" command): that one hides the panel when the Problems view has the focus, so a
 * "Show Problems" button pressed from there would close the failures it means to show.
 */
export const SHOW_PROBLEMS = 'workbench.panel.markers.view.focus';
