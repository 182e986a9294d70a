import { Migration } from '@mikro-orm/migrations';
import { SEARCH_TEXT_FIRST } from './Migration20261127180000_articleSearch.ts';

/**
 * The searched text of a body reads words as a person does (the core's `searchTextOfHtml`): a
 * tag that parts words (a block, a cell, `<br>`, `<img>`: the word count's boundaries) is a space,
 * any other tag is removed, so `un<b>believ</b>able` is one word; and a `<` of the text (`&lt;`)
 * is followed by a zero-width space, so that the text-search parser does not take `<numbat>`
 * written in an article for a tag and drop its word. Every article's stored `search_vector` is
 * computed again by rewriting its body as it is (the term counts follow through their trigger):
 * one pass over the table.
 */
export class Migration20261128140000_searchTextWords extends Migration {

  override name = 'Migration20261128140000_searchTextWords';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function cs_search_text(body text) returns text language sql immutable strict parallel safe as $$
  select translate(
    replace(replace(replace(replace(replace(
      regexp_replace(
        regexp_replace(left(body, 200000), '</?(?:address|article|aside|blockquote|br|caption|dd|details|div|dl|dt|figcaption|figure|footer|h1|h2|h3|h4|h5|h6|header|hr|img|li|main|ol|p|pre|section|summary|table|tbody|td|tfoot|th|thead|tr|ul)(?:[\\t\\n\\f\\r /][^>]*)?>', ' ', 'gi'),
        '<[^>]*>', '', 'g'),
      '&lt;', '<' || chr(8203)), '&gt;', '>'), '&nbsp;', chr(160)), '&quot;', '"'), '&amp;', '&'),
    chr(64976) || chr(64977), '  ')
$$;`);
    this.addSql(`update "articles" set "body" = "body";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create or replace ${SEARCH_TEXT_FIRST};`);
    this.addSql(`update "articles" set "body" = "body";`);
  }

}
