<?php

declare(strict_types=1);

// Parity fixture: a session save handler of the script's own, as apps keep sessions in a cookie or a database.
// PHP writes the session at the end of the request, after the destructors, while $_SESSION is still there, and
// outside any output handler: write() reads $_SESSION and sets a cookie from it; open() and close() hold an output
// buffer of their own (Zabbix's cookie sessions do both). The script then redirects with exit(), nothing printed.

final class CookieSessionHandler implements SessionHandlerInterface
{
    public function open(string $path, string $name): bool
    {
        ob_start();
        return true;
    }

    public function close(): bool
    {
        echo ob_get_clean();
        return true;
    }

    public function read(string $id): string
    {
        return '';
    }

    public function write(string $id, string $data): bool
    {
        setcookie('parity_session', isset($_SESSION) ? 'has ' . json_encode($_SESSION) : 'no $_SESSION', ['path' => '/']);
        return true;
    }

    public function destroy(string $id): bool
    {
        return true;
    }

    public function gc(int $max_lifetime): int
    {
        return 0;
    }
}

session_set_save_handler(new CookieSessionHandler(), false);
session_start();
$_SESSION['user'] = 'alice';
header('Location: /dump.php');
exit;
