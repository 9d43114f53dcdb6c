/** What a paged list's query offers for its next page (TanStack's useInfiniteQuery result). */
interface NextPage {
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  fetchNextPage: () => Promise<unknown>;
}

/** "More …" under a paged list: only while there is a next page, disabled (and saying so) while it loads. */
export function MoreButton({ pages, children }: { pages: NextPage; children: string }) {
  if (!pages.hasNextPage) return null;
  return (
    <button type="button" className="button subtle" disabled={pages.isFetchingNextPage} onClick={() => void pages.fetchNextPage()}>
      {pages.isFetchingNextPage ? 'Loading…' : children}
    </button>
  );
}
