import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, initialSession, routes } from './App';
import { startFirstScreen } from './first-screen';
import { pages, preloadEveryPageLater } from './lazy-pages';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 },
  },
});

// The session first: a portal link's token moves to sessionStorage, which the API calls read.
const session = initialSession();
if (!session) void pages.signIn.preload();
startFirstScreen(routes, queryClient, window.location.hash, session !== null);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App session={session} />
    </QueryClientProvider>
  </StrictMode>,
);
preloadEveryPageLater();
