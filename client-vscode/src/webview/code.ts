/**
 * Code in the chat: fenced blocks highlighted by highlight.js (its core and a handful of
 * languages, so the page script stays small) with a Copy button, coloured by the theme's own
 * token colours (media/chat.css maps highlight.js's classes onto VS Code's variables).
 */
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdownLanguage from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import type MarkdownIt from 'markdown-it';
import { icon } from './icons';

for (const [name, language] of Object.entries({
  bash,
  css,
  diff,
  go,
  ini,
  javascript,
  json,
  markdown: markdownLanguage,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, language);
}
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['sh', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['toml'], { languageName: 'ini' });
hljs.registerAliases(['html'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Source text as highlighted markup (escaped); a language it does not know stays plain text.
 * Auto-detection is left out on purpose: on a short snippet it guesses wrong more often than not.
 */
export function highlight(code: string, language: string | undefined): string {
  const name = language?.trim().toLowerCase();
  if (name && hljs.getLanguage(name)) {
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  }
  return escape(code);
}

/** A code block as the chat draws it: its language, a Copy button, and the highlighted text. */
export function codeBlock(code: string, language: string | undefined): string {
  const name = language?.trim().split(/\s+/)[0] ?? '';
  return (
    `<div class="code-block">` +
    `<div class="code-head"><span class="code-language">${escape(name)}</span>` +
    `<button class="icon-button" data-action="copyCode" title="Copy" aria-label="Copy the code">${icon('copy')}</button></div>` +
    `<pre><code class="hljs${name ? ` language-${escape(name)}` : ''}">${highlight(code, name)}</code></pre></div>`
  );
}

/** Make markdown-it draw fenced and indented code as `codeBlock` does. */
export function useCodeBlocks(markdown: MarkdownIt): void {
  markdown.renderer.rules.fence = (tokens, index) => codeBlock(tokens[index].content, tokens[index].info);
  markdown.renderer.rules.code_block = (tokens, index) => codeBlock(tokens[index].content, undefined);
}
