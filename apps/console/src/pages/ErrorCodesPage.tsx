import { useQuery } from '@tanstack/react-query';
import { api, call } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';

export function ErrorCodesPage() {
  const codes = useQuery({ queryKey: ['error-codes'], queryFn: () => call(api.GET('/error_codes')), staleTime: Infinity });
  return (
    <section className="card" aria-labelledby="codes-heading">
      <h1 id="codes-heading">Error codes</h1>
      <p className="muted">Every error the API answers carries one of these codes; its first three digits are the HTTP status.</p>
      <ErrorMessage error={codes.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Code</th>
            <th scope="col">Meaning</th>
          </tr>
        </thead>
        <tbody>
          {codes.data?.data.map((c) => (
            <tr key={c.code}>
              <td className="nowrap">
                <code>{c.code}</code>
              </td>
              <td>{c.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
