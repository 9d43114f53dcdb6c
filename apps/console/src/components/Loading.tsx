/** What a screen shows while its code or its first answer is on the way. */
export function Loading({ children = 'Loading…' }: { children?: string }) {
  return (
    <p className="loading" role="status">
      {children}
    </p>
  );
}
