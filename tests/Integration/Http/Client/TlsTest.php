<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http\Client;

use Kiln\Http\Client\ClientException;
use Kiln\Http\Client\ClientOptions;
use Kiln\Http\Client\HttpClient;

/** https against the fixture server serving TLS with a self-signed certificate made by ext-openssl. */
final class TlsTest extends ClientTestCase
{
    private string $dir = '';
    private string $base = '';

    protected function setUp(): void
    {
        if (!\extension_loaded('openssl')) {
            self::fail('ext-openssl is not loaded: scripts/install-deps.sh installs it');
        }
        parent::setUp();
        $this->dir = \sys_get_temp_dir() . '/kiln-client-tls-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir);
        $pem = $this->selfSignedCertificate();
        $this->startServer(["--tls={$pem}"]);
        $this->base = "https://127.0.0.1:{$this->port}";
    }

    protected function tearDown(): void
    {
        parent::tearDown();
        foreach (\glob($this->dir . '/*') ?: [] as $file) {
            \unlink($file);
        }
        @\rmdir($this->dir);
    }

    public function testHttpsWorksWithPeerVerificationOff(): void
    {
        $client = new HttpClient(new ClientOptions(verifyPeer: false));
        $this->inLoop(function () use ($client): void {
            self::assertSame('hello', $client->get("{$this->base}/hello")->body());
            self::assertSame('hello world', $client->get("{$this->base}/chunked")->body());
            self::assertSame('1', $client->get("{$this->base}/hello")->header('x-accepted'), 'TLS connections are pooled too');
        });
    }

    public function testHttpsVerifiesThePeerAgainstACafile(): void
    {
        $client = new HttpClient(new ClientOptions(cafile: $this->dir . '/cert.pem'));
        $this->inLoop(function () use ($client): void {
            $response = $client->get("{$this->base}/slow");
            self::assertSame(5, \iterator_count($response->stream()));
        });
    }

    public function testUntrustedCertificateIsRejected(): void
    {
        $client = new HttpClient();
        $this->inLoop(function () use ($client): void {
            try {
                $client->get("{$this->base}/hello");
                self::fail('A self-signed certificate must not be trusted by default');
            } catch (ClientException $e) {
                self::assertStringContainsString('TLS handshake', $e->getMessage());
            }
        });
    }

    /** Writes cert.pem (certificate only, the CA file) and server.pem (certificate + key); returns the latter. */
    private function selfSignedCertificate(): string
    {
        $config = $this->dir . '/openssl.cnf';
        \file_put_contents($config, "[req]\ndistinguished_name = dn\n[dn]\n[san]\nsubjectAltName = IP:127.0.0.1, DNS:localhost\nbasicConstraints = CA:TRUE\n");
        $options = ['config' => $config, 'digest_alg' => 'sha256', 'x509_extensions' => 'san'];
        $key = \openssl_pkey_new(['private_key_type' => \OPENSSL_KEYTYPE_EC, 'curve_name' => 'prime256v1']);
        self::assertNotFalse($key, 'openssl_pkey_new failed: ' . \openssl_error_string());
        $csr = \openssl_csr_new(['commonName' => '127.0.0.1'], $key, $options);
        self::assertNotFalse($csr);
        self::assertNotTrue($csr);
        $cert = \openssl_csr_sign($csr, null, $key, 1, $options);
        self::assertNotFalse($cert);
        \openssl_x509_export($cert, $certPem);
        \openssl_pkey_export($key, $keyPem);
        \file_put_contents($this->dir . '/cert.pem', $certPem);
        \file_put_contents($this->dir . '/server.pem', $certPem . $keyPem);

        return $this->dir . '/server.pem';
    }
}
