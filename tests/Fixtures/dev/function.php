<?php
function dev_fixture_helper(): string
{
    return 'function';
}
echo dev_fixture_helper();
