<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A real nginx (`/usr/sbin/nginx`) for tests with a generated config in a temp dir (`-p DIR -c DIR/nginx.conf`,
 * `daemon off`, pid and logs in DIR) on a free 127.0.0.1 port, serving a document root — static files, and
 * `*.php` through FastCGI when a backend is given. The PHP part is the usual front-controller setup
 * (Debian's `snippets/fastcgi-php.conf` plus the nginx wiki's `try_files`):
 *
 * - `location / { try_files $uri $uri/ @extensionless; }` — a file, a directory (its index.php / index.html),
 *   else `/page` → `/page.php` when that exists, else `/index.php` (the front controller; REQUEST_URI stays the
 *   original, query string kept);
 * - `location ~ [^/]\.php(/|$)` with `fastcgi_split_path_info ^(.+?\.php)(/.*)$` (PATH_INFO, always sent, empty
 *   when there is none), `try_files $fastcgi_script_name =404`, `include fastcgi_params`,
 *   `SCRIPT_FILENAME $document_root$fastcgi_script_name`, `HTTP_PROXY ""` (httpoxy: nginx then drops the header);
 * - `fastcgi_params` is the classic file nginx 1.22 ships (CLASSIC_FASTCGI_PARAMS, written into the temp dir)
 *   unless another path is given: Debian's copy (and nginx's own file in recent releases) adds `fastcgi_param HTTP_HOST $host`,
 *   which drops the port from HTTP_HOST (a workaround for absolute-form request targets). That breaks the
 *   `Host` header apps have always seen (and Apache sends), so it is not the reference here;
 * - `keepConn: true` adds `fastcgi_keep_conn on` and an upstream with `keepalive N` idle connections per worker,
 *   N = php-fpm children / nginx workers (at least 1): a kept connection pins a php-fpm child, and more idle kept
 *   connections than children leave requests waiting in php-fpm's backlog.
 *
 * Ready when the port answers HTTP. Stopped by PID when stop() is called or the object goes away.
 */
final class NginxProcess
{
    use PeerServer;

    public const BINARY = '/usr/sbin/nginx';
    public const MIME_TYPES = '/etc/nginx/mime.types';

    /** nginx 1.22's `conf/fastcgi_params`, byte for byte: every request header reaches PHP as HTTP_*, unchanged. */
    public const CLASSIC_FASTCGI_PARAMS = <<<'PARAMS'

        fastcgi_param  QUERY_STRING       $query_string;
        fastcgi_param  REQUEST_METHOD     $request_method;
        fastcgi_param  CONTENT_TYPE       $content_type;
        fastcgi_param  CONTENT_LENGTH     $content_length;

        fastcgi_param  SCRIPT_NAME        $fastcgi_script_name;
        fastcgi_param  REQUEST_URI        $request_uri;
        fastcgi_param  DOCUMENT_URI       $document_uri;
        fastcgi_param  DOCUMENT_ROOT      $document_root;
        fastcgi_param  SERVER_PROTOCOL    $server_protocol;
        fastcgi_param  REQUEST_SCHEME     $scheme;
        fastcgi_param  HTTPS              $https if_not_empty;

        fastcgi_param  GATEWAY_INTERFACE  CGI/1.1;
        fastcgi_param  SERVER_SOFTWARE    nginx/$nginx_version;

        fastcgi_param  REMOTE_ADDR        $remote_addr;
        fastcgi_param  REMOTE_PORT        $remote_port;
        fastcgi_param  SERVER_ADDR        $server_addr;
        fastcgi_param  SERVER_PORT        $server_port;
        fastcgi_param  SERVER_NAME        $server_name;

        # PHP only, required if PHP was built with --enable-force-cgi-redirect
        fastcgi_param  REDIRECT_STATUS    200;

        PARAMS;

    private function __construct(
        private readonly PeerProcess $process,
        private readonly string $dir,
        private readonly int $port,
        private readonly string $documentRoot,
    ) {}

    /**
     * @param PhpFpmProcess|string|null $fastcgi the backend for *.php: a PhpFpmProcess, an address
     *        (`127.0.0.1:9000`, `unix:/path`), or null for static files only
     * @param string $extra directives added inside the server block
     * @param string|null $fastcgiParams a fastcgi_params file to include instead of CLASSIC_FASTCGI_PARAMS
     */
    public static function start(
        string $documentRoot,
        PhpFpmProcess|string|null $fastcgi = null,
        bool $keepConn = false,
        int $workers = 1,
        string $serverName = 'localhost',
        string $extra = '',
        ?string $fastcgiParams = null,
        float $timeout = 10.0,
    ): self {
        $root = realpath($documentRoot);
        if ($root === false || !is_dir($root)) {
            throw new \ValueError("document root $documentRoot is not a directory");
        }
        $address = $fastcgi instanceof PhpFpmProcess ? $fastcgi->address() : $fastcgi;
        $keepalive = $fastcgi instanceof PhpFpmProcess ? max(1, intdiv($fastcgi->children(), $workers)) : 1;
        return PeerProcess::onFreePort(static function (int $port) use ($root, $address, $keepConn, $workers, $serverName, $extra, $fastcgiParams, $keepalive, $timeout): self {
            $dir = PeerProcess::tempDir('kiln-nginx');
            if ($fastcgiParams === null) {
                file_put_contents("$dir/fastcgi_params", self::CLASSIC_FASTCGI_PARAMS);
            }
            $params = $fastcgiParams ?? "$dir/fastcgi_params";
            file_put_contents("$dir/nginx.conf", self::config($dir, $port, $root, $address, $keepConn, $workers, $serverName, $extra, $params, $keepalive));
            $process = PeerProcess::launch('nginx', [self::BINARY, '-p', "$dir/", '-c', "$dir/nginx.conf", '-e', "$dir/error.log"], "$dir/nginx.out");
            $nginx = new self($process, $dir, $port, $root);
            try {
                $process->waitUntil(static fn(): bool => PeerProcess::answersHttp($port), $timeout, "port $port answered HTTP", $nginx->diagnostics(...));
            } catch (\RuntimeException $e) {
                $nginx->stop();
                throw $e;
            }
            return $nginx;
        });
    }

    /** The generated nginx.conf (public for the self-test and for failure messages). */
    public static function config(
        string $dir,
        int $port,
        string $root,
        ?string $fastcgi,
        bool $keepConn,
        int $workers,
        string $serverName,
        string $extra,
        string $fastcgiParams,
        int $keepalive = 1,
    ): string {
        $user = PeerProcess::isRoot() ? 'user www-data www-data;' : '';
        $upstream = '';
        $locations = "        location / {\n            try_files \$uri \$uri/ =404;\n        }";
        if ($fastcgi !== null) {
            $pass = $fastcgi;
            if ($keepConn) {
                $upstream = "    upstream php_backend {\n        server $fastcgi;\n        keepalive $keepalive;\n    }";
                $pass = 'php_backend';
            }
            $keep = $keepConn ? "\n            fastcgi_keep_conn on;" : '';
            $params = $fastcgiParams;
            $locations = <<<LOC
                        location / {
                            try_files \$uri \$uri/ @extensionless;
                        }
                        location @extensionless {
                            if (-f \$document_root\$uri.php) {
                                rewrite ^ \$uri.php last;
                            }
                            rewrite ^ /index.php last;
                        }
                        location ~ [^/]\\.php(/|\$) {
                            fastcgi_split_path_info ^(.+?\\.php)(/.*)\$;
                            set \$path_info \$fastcgi_path_info;
                            try_files \$fastcgi_script_name =404;
                            include $params;
                            fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
                            fastcgi_param PATH_INFO \$path_info;
                            fastcgi_param HTTP_PROXY "";
                            fastcgi_index index.php;
                            fastcgi_pass $pass;$keep
                        }
                LOC;
        }
        $mime = self::MIME_TYPES;
        return <<<CONF
            # generated by tests/Support/NginxProcess.php
            $user
            worker_processes $workers;
            daemon off;
            master_process on;
            pid $dir/nginx.pid;
            error_log $dir/error.log notice;
            events {
                worker_connections 1024;
            }
            http {
                include $mime;
                default_type application/octet-stream;
                access_log $dir/access.log;
                sendfile on;
                keepalive_requests 10000;
                client_max_body_size 64m;
                client_body_temp_path $dir/tmp-body;
                proxy_temp_path $dir/tmp-proxy;
                fastcgi_temp_path $dir/tmp-fastcgi;
                uwsgi_temp_path $dir/tmp-uwsgi;
                scgi_temp_path $dir/tmp-scgi;
            $upstream
                server {
                    listen 127.0.0.1:$port;
                    server_name $serverName;
                    root $root;
                    index index.php index.html;
            $locations
            $extra
                }
            }

            CONF;
    }

    public function diagnostics(): string
    {
        return PeerProcess::tail("{$this->dir}/nginx.out") . "\n" . PeerProcess::tail("{$this->dir}/error.log")
            . "\n" . PeerProcess::tail("{$this->dir}/access.log", 10);
    }

    public function documentRoot(): string
    {
        return $this->documentRoot;
    }

    public function baseUrl(): string
    {
        return "http://127.0.0.1:{$this->port}";
    }

    public function port(): int
    {
        return $this->port;
    }
}
