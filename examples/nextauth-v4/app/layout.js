// app/layout.js
export const metadata = { title: "NextAuth and Latchkey" };

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
